"""Fielding a study: one survey in several languages, online panels, and validation items.

``blocks`` declares the survey-file keys (``languages``, ``panel``, ``validation``, and the
question keys ``check`` and ``screen_out``); ``words`` holds the words of the questions the build
adds in each shipped language; ``variables`` checks those keys and adds the questions the page
answers or asks itself (``language``, ``arm``, ``<id>_check``, ``<id>_direct``); ``translations``
reads a translation file and refuses any change but to texts, with the file and line.
"""
