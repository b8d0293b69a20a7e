"""The payconform reference sandbox server: an independent implementation of the service interface spec.

Run it with `python -m payconform.reference`. It imports nothing from the rest of `payconform` and does
not read `contract/`: it is written from the spec, so that the suite passing against it means something.
Start reading at `reference.py` (the Reference object and the patch points mutants use) and
`pipeline.py` (the order every API call goes through).
"""
