"""Agents from outside the package.

Saved policies (stable-baselines3 models read without torch, ONNX and TorchScript networks, plain Python policies:
:mod:`~urgym.agents.outside.policies`), plug-ins named by spec (:mod:`~urgym.agents.outside.plugins`), engine programs
speaking UEI (:mod:`~urgym.agents.outside.engine`) and the restricted reader of PyTorch weight files
(:mod:`~urgym.agents.outside.weights`).
"""
