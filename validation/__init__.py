"""Thin numpy (torch-free) training and theory-vs-simulation comparison layer."""
