"""Effective character and paragraph formatting of a .docx, as Word displays it (python-docx).

Shared by the docx-formatting family's generator (to record the document's
existing formatting) and its verifier (copied into each task's ``tests/`` as
``docx_format.py``), so both read formatting the same way.
"""


def _style_value(style, getter):
    while style is not None:
        value = getter(style)
        if value is not None:
            return value
        style = style.base_style
    return None


def effective(run, paragraph, attr):
    value = getattr(run.font, attr)
    if value is None:
        value = _style_value(run.style, lambda s: getattr(s.font, attr))
    if value is None:
        value = _style_value(paragraph.style, lambda s: getattr(s.font, attr))
    return bool(value)


def runs_of(paragraph):
    """Every run of the paragraph, also those inside hyperlinks."""
    out = []
    for item in paragraph.iter_inner_content():
        out.extend(item.runs if hasattr(item, "runs") else [item])
    return out


def char_formats(paragraph):
    """(text, bold flags, italic flags) of a paragraph, one flag per character."""
    text, bold, italic = "", [], []
    for run in runs_of(paragraph):
        t = run.text
        text += t
        bold += [effective(run, paragraph, "bold")] * len(t)
        italic += [effective(run, paragraph, "italic")] * len(t)
    return text, bold, italic


def alignment(paragraph):
    value = paragraph.alignment
    if value is None:
        value = _style_value(paragraph.style, lambda s: s.paragraph_format.alignment)
    return value


def spans_to_mask(spans, n):
    mask = [False] * n
    for start, end in spans:
        for i in range(start, end):
            mask[i] = True
    return mask
