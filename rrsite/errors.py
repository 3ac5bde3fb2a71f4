"""The exceptions a user reads instead of a traceback; the CLI prints them and exits with 2."""


class RRSiteError(Exception):
    """Base of every error rrsite reports to the user (message printed, exit code 2)."""


class UsageError(RRSiteError):
    """A command-line argument is wrong."""
