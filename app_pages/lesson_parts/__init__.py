"""The Lesson's parts, imported by its page (app_pages/lesson.py):

- :mod:`.keys` (with keys.js): the keys that move between the steps (a components.v2 component).
"""
