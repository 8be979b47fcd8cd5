"""Torch numerics for the suite: models, losses, data, algorithms, solvers.

Layering rule: nothing here imports from ``theorems`` or ``verify``.
Every tensor is float64 unless a function says otherwise, and independent
runs / instances are batched along a leading dimension.
"""
import torch

DTYPE = torch.float64
