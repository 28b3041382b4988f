"""What an operator's signal said, whatever shape its input came in.

`temporal workflow signal --name cancel` is typed by hand: `--input '"done"'`,
`--input '{"reason": "done"}'` or `--input 42` all mean "cancel". Dropping the
signal because its input was not a JSON string (what the SDK does with input it
cannot decode) would leave the run launching and billing while the operator
believes it stopped.
"""

from __future__ import annotations

import json

from pydantic import JsonValue

#: The cancel signal's input: any JSON (a string is the reason).
CancelInput = JsonValue


def cancel_reason(given: CancelInput) -> str:
    """The reason a `cancel` signal gave: its string, its `reason` field, else its JSON text.

    Nothing (null, `{}` as the Temporal UI's signal dialog sends) is no reason.
    """
    if isinstance(given, str):
        return given
    if isinstance(given, dict) and isinstance(given.get("reason"), str):
        return str(given["reason"])
    return json.dumps(given, sort_keys=True) if given not in (None, {}, []) else ""
