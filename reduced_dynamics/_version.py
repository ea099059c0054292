"""The rdyn version (one place; ``rdyn.__version__`` re-exports it, checkpoints record it)."""
__version__ = "0.1.0"
