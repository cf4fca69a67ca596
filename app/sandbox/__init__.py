"""The flows' sandbox: user code in confined worker processes (`code`), requests only to allowed hosts (`http`).

Import the modules themselves (`app.sandbox.code`, `app.sandbox.http`): this package's `__init__`
stays empty because the isolated worker imports `app.sandbox.confinement` before it locks itself in.
"""
