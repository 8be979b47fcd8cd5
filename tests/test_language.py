"""Paper B's language figures (numerics.paper_b.language): the loading and training path at the paper's scale, run end
to end on a tiny randomly initialized BERT saved to a tmp dir (no download), the data readers, and the analog."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from numerics.paper_b import language as Lg

ROOT = Path(__file__).resolve().parent.parent
WORDS = "the a cat dog is on mat not good bad man woman sleeps runs you are stupid nice".split()


def _tiny_bert(folder: Path) -> None:
    """A 2-layer, width-32 BertForSequenceClassification and a WordPiece vocab written here, saved as a local model
    directory in bert-base-uncased's layout (config.json, vocab.txt, model.safetensors)."""
    Model, Tokenizer = Lg.transformers_bert()
    from transformers import BertConfig

    folder.mkdir(parents=True)
    (folder / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS) + "\n")
    cfg = BertConfig(vocab_size=5 + len(WORDS), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=64)
    torch.manual_seed(0)
    Model(cfg).save_pretrained(folder)
    (folder / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS) + "\n")


def _data_dir(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    _tiny_bert(root / "bert-base-uncased")
    g = np.random.default_rng(0)
    (root / "mnli").mkdir()
    for name, n in (("multinli_1.0_train.jsonl", 64), ("multinli_1.0_dev_matched.jsonl", 16)):
        with open(root / "mnli" / name, "w") as f:
            for i in range(n):
                a, b = (" ".join(g.choice(WORDS, 5)) for _ in range(2))
                label = ("entailment", "neutral", "contradiction", "-")[i % 4]
                f.write(json.dumps(dict(sentence1=a, sentence2=b, gold_label=label)) + "\n")
    (root / "civil_comments").mkdir()
    with open(root / "civil_comments" / "all_data_with_identities.csv", "w") as f:
        f.write("id,comment_text,toxicity,split\n")
        for i in range(80):
            f.write(f'{i},"{" ".join(g.choice(WORDS, 6))}",{0.8 if i % 9 == 0 else 0.1},'
                    f'{"train" if i < 60 else "test"}\n')
    return root


def test_the_paper_s_path_end_to_end_on_a_tiny_bert(tmp_path):
    """Find, read, load offline, fine-tune with the four optimizers and a mutant (paired runs), read the embeddings."""
    root = _data_dir(tmp_path)
    dirs = Lg.find_language_data(root)
    assert set(dirs) == {"bert", "mnli", "civil_comments"}
    assert Lg.check_language_data(root) == ["bert-base-uncased", "mnli", "civil_comments"]
    mnli = Lg.read_mnli(dirs["mnli"])
    assert mnli.classes == 3 and len(mnli.train[2]) == 48  # '-' (no majority) dropped
    civil = Lg.read_civil_comments(dirs["civil_comments"])
    assert civil.classes == 2 and len(civil.train[2]) == 60 and sum(civil.train[2]) == 7
    tf = {"SGD": Lg.sgd(0.1), "SNGD": Lg.sngd(0.1, 1.0), "SPS": Lg.sps(1.0), "Adam": Lg.adam(1e-3),
          "SNGD without normalization": Lg.sngd_unnormalized(0.1, 1.0)}
    runs = Lg.train_bert(dirs["bert"], mnli, tf, seeds=[1, 2], steps=3, batch=8, max_len=16, eval_examples=8)
    for name, run in runs.items():
        assert run.batch_loss.shape == (3, 2) and torch.isfinite(run.batch_loss).all(), name
        assert set(run.final) == {"train_loss", "train_accuracy", "test_loss", "test_accuracy"}
    assert torch.equal(runs["SGD"].batch_loss[0], runs["Adam"].batch_loss[0])  # same init and minibatch: paired
    assert torch.allclose(runs["SGD"].batch_loss, runs["SNGD without normalization"].batch_loss)  # = SGD at 0.1
    model, tok = Lg.load_bert(dirs["bert"], num_labels=2)
    ids, keep = Lg.bert_sentences(tok, civil, 10, max_len=16)
    assert ids.shape == (10, 16) and keep.any(1).all() and not keep[:, 0].any()  # [CLS] is not a word
    v = torch.nn.functional.embedding(ids, model.bert.embeddings.word_embeddings.weight.detach())
    share = Lg.share_within(v, keep, (0.2, 1.0))
    assert share.shape == (10, 2) and torch.all(share[:, 1] == 1)


def test_a_missing_file_is_one_line_naming_what_to_put_where(tmp_path):
    root = _data_dir(tmp_path)
    (root / "civil_comments" / "all_data_with_identities.csv").unlink()
    with pytest.raises(Lg.DataFormatError, match=r"civil_comments/: no all_data_with_identities.csv; put .*WILDS"):
        Lg.find_language_data(root)
    (root / "bert-base-uncased" / "config.json").unlink()
    with pytest.raises(Lg.DataFormatError, match=r"bert-base-uncased/: no config.json"):
        Lg.find_language_data(root)
    empty = tmp_path / "none"
    empty.mkdir()
    assert Lg.find_language_data(empty) is None  # nothing there: the analog runs, not an error
    env = dict(os.environ, VERIFY_DATA_DIR=str(root), PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-m", "numerics.paper_b.language"], capture_output=True, text=True, env=env,
                       cwd=ROOT, timeout=120)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "config.json" in r.stderr


def test_bad_files_are_format_errors(tmp_path):
    (tmp_path / "train.jsonl").write_text("{not json\n")
    (tmp_path / "dev_matched.jsonl").write_text("{}\n")
    with pytest.raises(Lg.DataFormatError, match="not JSON lines"):
        Lg.read_mnli(tmp_path)
    (tmp_path / "all_data_with_identities.csv").write_text("comment_text,split\nhi,train\n")
    with pytest.raises(Lg.DataFormatError, match="toxicity"):
        Lg.read_civil_comments(tmp_path)


def test_the_analog_tasks_have_their_stated_structure():
    nli = Lg.make_task("nli", 3000, 10, seed=3)
    assert abs(float(nli.prior.min()) - 1 / 3) < 0.03  # balanced, as MNLI
    cue0 = 2 + Lg.DISTRACTORS
    hyp = nli.X_train[:, 2 + Lg.SEGMENT:]
    cue = hyp[hyp >= cue0].reshape(-1)  # exactly one cue in each hypothesis, of the label's class
    assert len(cue) == 3000 and torch.equal((cue - cue0) // Lg.KEYS, nli.y_train)
    toxic = Lg.make_task("toxic", 9000, 10, seed=3)
    assert abs(float(toxic.prior[1]) - Lg.TOXIC_SHARE) < 0.01
    has = ((toxic.X_train >= cue0) & (toxic.X_train < cue0 + Lg.TOXIC_WORDS)).any(1)
    assert torch.equal(has.long(), toxic.y_train)  # toxic iff a toxic word occurs


def test_the_analog_runs_are_paired_batched_and_reproducible():
    task = Lg.make_task("toxic", 256, 64, seed=1)
    cfg = Lg.config_for(task, dim=8, heads=2, mlp=16)
    tf = {"SGD": Lg.sgd(0.3), "Adam": Lg.adam(1e-2)}
    a = Lg.train(task, cfg, tf, [5, 6], steps=6, batch=32)
    b = Lg.train(task, cfg, {"SGD": Lg.sgd(0.3)}, [5], steps=6, batch=32)
    assert torch.equal(a["SGD"].batch_loss[0], a["Adam"].batch_loss[0])  # shared init and first minibatch
    assert torch.allclose(a["SGD"].batch_loss[:, :1], b["SGD"].batch_loss, rtol=1e-5, atol=1e-6)  # runs independent
    c = Lg.train(task, cfg, tf, [5, 6], steps=6, batch=32)
    assert torch.equal(a["Adam"].batch_loss, c["Adam"].batch_loss)


def test_adam_matches_torch_adam():
    p = torch.randn(3, 4)
    ours = Lg.adam(0.1)
    s = ours.init((p[None],))
    ref = p.clone().requires_grad_(True)
    opt = torch.optim.Adam([ref], lr=0.1)
    q = p[None].clone()
    for t in range(3):
        g = torch.randn(3, 4)
        u, s = ours.update((g[None],), s, (q,), {})
        q = q + u[0]
        ref.grad = g.clone()
        opt.step()
    assert torch.allclose(q[0], ref.detach(), atol=1e-6)
