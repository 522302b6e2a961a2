"""``snaprepl status`` and ``snaprepl history``: the catalog collected as plain data (``status``), each log's
watermarks (``watermarks``) and the text and JSON renderings (``render``)."""
