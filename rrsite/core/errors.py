"""The exceptions and warnings of rrsite.core."""


class DesignError(ValueError):
    """A design parameter has an impossible value; the message names the parameter and the value."""


class PrivacyWarning(UserWarning):
    """Allowed but risky: a design with weak privacy, or a budget composed past a sensible level."""
