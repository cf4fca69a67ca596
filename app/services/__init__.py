"""What the API does with workflows and files. No HTTP here: the routes parse, these act."""
