"""The exceptions a user reads instead of a traceback; the CLI turns them into messages and exit 2."""


class RRSiteError(Exception):
    """Base of every error rrsite reports to the user (message printed, exit code 2)."""


class UsageError(RRSiteError):
    """A command-line argument is wrong."""
