"""The receiver kit: checks a user's webhook receiver against the receiving side of the spec's Events part.

It sends deliveries exactly as the service would (`deliveries`), through one HTTP function (`send`), runs the
checks (`checks`, each naming a `subject: receiver` requirement) and writes the artifacts of a run (`runner`).
"""
