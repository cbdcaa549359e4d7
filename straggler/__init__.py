"""straggler: find slow ranks in distributed PyTorch training, and say why."""
