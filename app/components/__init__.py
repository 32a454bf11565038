"""Reusable pieces of the app: URL state, controls, the dataset picker, caches."""
