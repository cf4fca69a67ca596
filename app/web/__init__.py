"""The HTTP edge: routes, middleware, errors as JSON, the OpenAPI schema, /docs and the chat page."""
