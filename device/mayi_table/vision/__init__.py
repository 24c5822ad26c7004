"""Vision: camera frames -> corner-index detections -> physical cards -> table zones.

Also the synthetic table renderer used for training data, tests and the demo.
"""
