"""The project's error types. Each message names the file (if any) and the problem."""


class StudioError(Exception):
    """Base class for errors the app and CLI report as one line, never as a traceback."""


class CheckpointError(StudioError):
    """A checkpoint directory is missing, incomplete, corrupt, unsafe or inconsistent."""


class InputError(StudioError):
    """Text or options given by a user cannot be translated (e.g. empty after normalization)."""
