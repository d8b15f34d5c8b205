"""The request classifier: a request's text to its type, complexity and safety class, by rules over
folded text (``rules``), with an optional model second opinion that can only make it stricter
(``triage``).  Pure: text in, a ``Classification`` out.  The gate (``decide.gate``) reads what it says,
apart from it: the classifier never decides what a pass does."""
