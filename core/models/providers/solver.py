"""``reference/solver``: answers every item correctly by computing the truth. Not an LLM — it exists to check the
pipeline end to end (prompting, storing, parsing, scoring, views) without a model. Costs nothing, needs no key."""

from __future__ import annotations

import time

from core.models.base import BaseModel, Completion, ModelError, Request
from core.models.providers import ProviderInfo, register

INFO = ProviderInfo("reference", "reference/solver", 64, (), None, False,
                    "computes the true answer; not an LLM; checks the pipeline", constrained=True, in_process=True,
                    choices=("reference/solver",))


@register(INFO)
class ReferenceSolver(BaseModel):
    supported_params = ()  # deterministic: every sampling parameter is ignored
    constrained = True     # its replies always have the answer's form

    @classmethod
    def from_spec(cls, spec: str, name: str, **_ignored) -> ReferenceSolver:
        if name.lower() != "solver":
            raise ModelError(f"unknown reference model {name!r}; use reference/solver")
        return cls("reference/solver", "solver")

    async def complete(self, request: Request) -> Completion:
        if request.item is None or not request.task:
            raise ModelError("reference/solver needs the task item (Request.item and Request.task)")
        from core.tasks import get_task  # late: keeps `import core.models` light

        started = time.perf_counter()
        try:
            text = get_task(request.task).solve(request.item)
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelError(f"reference/solver cannot solve this item: {type(exc).__name__}: {exc}") from None
        p = request.params
        dropped = tuple(f for f in ("temperature", "top_p", "top_k", "seed") if getattr(p, f) is not None)
        return Completion(
            text=text,
            tokens_in=0,
            tokens_out=0,
            latency_ms=(time.perf_counter() - started) * 1000.0,
            cost_usd=0.0,
            finish_reason="stop",
            dropped_params=dropped,
        )
