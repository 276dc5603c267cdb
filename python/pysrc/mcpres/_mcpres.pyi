import os
from typing import Any, Dict, Iterable, List, Optional, Union

Input = Union[bytes, bytearray, str, "os.PathLike[str]"]
PathLike = Union[str, "os.PathLike[str]"]

__version__: str

class McpresError(ValueError): ...

def validate(
    input: Input,
    /,
    *,
    name: Optional[str] = None,
    trust_policy: Optional[PathLike] = None,
    at: Optional[str] = None,
    original_result: Optional[Input] = None,
) -> Dict[str, Any]: ...
def verify(
    input: Input,
    /,
    *,
    name: Optional[str] = None,
    trust_policy: Optional[PathLike] = None,
    at: Optional[str] = None,
) -> Dict[str, Any]: ...
def validate_batch(
    inputs: Iterable[Input],
    /,
    *,
    jobs: Optional[int] = None,
    verify: bool = False,
    trust_policy: Optional[PathLike] = None,
    at: Optional[str] = None,
) -> List[Dict[str, Any]]: ...
def canonicalize(input: Input, /) -> bytes: ...
def digest(input: Input, /, kind: str) -> str: ...
def explain(code: str, /) -> Dict[str, str]: ...
def codes() -> List[str]: ...
