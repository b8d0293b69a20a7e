"""The fuzz phase: schemathesis and hypothesis over the contract's OpenAPI documents.

`session` loads the documents onto the transport and runs cases and stateful walks, `settings` merges
fuzz.yaml, the profile and the command line, `walk_bodies` shapes the walks' bodies like the profile's
examples, `coverage` attaches the documents' examples, `report` turns a failure into a requirement with a
reproduction, and `properties` holds the settings of property tests whose examples are requests.
"""
