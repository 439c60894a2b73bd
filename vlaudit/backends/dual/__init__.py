"""``hf-clip:`` and ``open_clip:``: the dual encoders (FeatureBackends) and their math-preserving perturbations."""
