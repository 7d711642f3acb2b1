"""Replica theory of linear associative memories: free entropy, energy terms,
capacities and symbolic checks.  May import ``hcizz``, never ``validation``."""
from hcizz._estimate import Estimate

__all__ = ["Estimate"]
