"""Planning a round: the project manager, the plan and its fixes, its scheduler and its revision."""
