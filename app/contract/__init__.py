"""The wire: request and response shapes, rows as the contract's objects, file names as users see them."""
