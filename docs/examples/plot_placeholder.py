"""
Placeholder
===========

Temporary.
"""
print(1)
