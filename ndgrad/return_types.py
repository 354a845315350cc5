"""``torch.return_types``: the named-tuple classes that ops returning several tensors give
(``max(dim)`` -> ``return_types.max(values, indices)``). Each class is entered here by
``_ops.arguments.return_type`` when the op module defining it is imported; this module
defines nothing itself, so it imports nothing and can be imported first."""
