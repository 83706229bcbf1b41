"""Benchmark agents against perfect play."""
