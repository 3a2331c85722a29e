"""A log of records watched over time: each metric per window, with its interval, and a drop
against a baseline flagged at a stated false-alarm rate for the whole log.

Windows are spans of time aligned on the UTC epoch (``"1h"``: clock hours, ``"1d"``: UTC
days), or runs of ``N`` records in time order (``window=N``, for files without times). The
baseline is the first ``N`` windows (``baseline=N``) or the records of a span of time
(``baseline=(start, end)``); the windows after it are watched.

The drop test. For each watched window ``t`` and each span of the last 1, 2 and 3 watched
windows ending at ``t``, a one-sided Welch test that the span's mean is below the baseline's
(Student's t, Welch-Satterthwaite degrees of freedom). A single window catches a large drop at
once; three pooled catch a smaller one within three windows. Every test of the log (every
metric, window and span) runs at ``false_alarm / tests``: by the union bound (Bonferroni) the
chance of any false alarm on a log with no drop is at most ``false_alarm``, whatever the
tests' dependence (they share the baseline and overlap). We chose this over a CUSUM, whose
threshold must be set by simulation for each score distribution and window size: the bound
here needs only each test's level, which the t approximation gives for windows of tens of
records up. ``benchmarks/quality/watch.py`` measures both rates.

With people's labels of whole answers (``labels=``, as ``evaluate`` takes them), a window,
span or baseline holding at least ``PPI_MIN_LABELS`` labelled answers has its mean corrected
by them (``corrected_mean``: PPI++); a test compares corrected means where both sides are
corrected, else the judge's means (``Alarm.basis`` says which).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from .._core.errors import SampleError
from .._running.output import read_records
from .._running.store import Record, read_log
from .._stats.ppi import PPI_MIN_LABELS
from .answers import LabelSource, read_answer_labels
from .corrected import AnswerLabel, check_answers
from .windows import Estimate, describe, estimate, parse_window, scored, welch, windows

__all__ = ["Alarm", "Estimate", "Watch", "Window", "parse_window", "watch", "watch_records"]

SPANS = 3  # a drop is tested over the last 1, 2 and 3 watched windows
MIN_SCORED = 10  # a span with fewer scored records is not tested


@dataclass(frozen=True)
class Window:
    """One window of one metric: ``start`` and ``end`` (None when windowed by record
    order), ``scored`` and ``unscorable`` records, ``estimate`` (None when nothing was
    scored), ``judge`` the judge's own mean (the estimate's mean unless corrected),
    ``baseline`` whether it is one."""

    metric: str
    index: int
    start: datetime | None
    end: datetime | None
    scored: int
    unscorable: int
    estimate: Estimate | None
    judge: float | None
    baseline: bool


@dataclass(frozen=True)
class Alarm:
    """A drop flagged: ``window`` the last window of the span tested, ``span`` how many
    windows it pools, ``drop`` the baseline's mean minus theirs, ``statistic`` Welch's t,
    ``p_value`` (one-sided) below ``level`` (the per-test level), ``basis`` ``"judge"`` or
    ``"corrected"``."""

    metric: str
    window: int
    span: int
    drop: float
    statistic: float
    p_value: float
    level: float
    basis: str


@dataclass(frozen=True)
class Watch:
    """What ``watch`` found: per metric its ``windows``, its ``baseline`` estimate, and the
    ``alarms`` (the first per window); ``tests`` run, each at ``false_alarm / tests``;
    ``labelled`` answers given (``labels=``)."""

    metrics: list[str]
    window: str
    false_alarm: float
    confidence: float
    windows: dict[str, list[Window]]
    baseline: dict[str, Estimate | None]
    baseline_windows: list[int]
    tests: int
    alarms: list[Alarm] = field(default_factory=list)
    labelled: int = 0

    @property
    def flagged(self) -> bool:
        return bool(self.alarms)

    @property
    def watched(self) -> int:
        return sum(1 for w in next(iter(self.windows.values()), []) if not w.baseline)

    def note(self, window: Window) -> str:
        """With labels, what the window's mean is: corrected by its labelled answers, or the
        judge's where fewer than ``PPI_MIN_LABELS`` label it; empty without labels."""
        e = window.estimate
        if not self.labelled or e is None:
            return ""
        if e.method == "ppi":
            return f"corrected ({e.labels} labels)"
        return f"judge's (< {PPI_MIN_LABELS} labels)"

    def statement(self) -> str:
        """The false-alarm rate, as the output states it."""
        return (
            f"false-alarm rate {self.false_alarm:.0%} per log of up to {self.watched} watched "
            f"windows ({len(self.metrics)} metric{'s' * (len(self.metrics) != 1)}, "
            f"{self.tests} tests at {self.false_alarm / max(self.tests, 1):.2g} each)"
        )


def watch(
    source: str | Path | Record | Iterable[str | Path | Record],
    *,
    window: str | timedelta | int = "1d",
    baseline: int | tuple[datetime, datetime] = 5,
    metrics: Sequence[str] | None = None,
    false_alarm: float = 0.05,
    confidence: float = 0.95,
    labels: LabelSource | Sequence[LabelSource] | None = None,
) -> Watch:
    """Watch logged recall over time (``ragrecall watch`` is its command line).

    ``source``: logs or results files (``RecallLogger``'s ``JsonlSink``, ``eval --out``;
    every line is an event, a query logged twice counts twice), a Ray run's directory, or
    ``Record``s. ``window``: ``"15m"``, ``"1h"``, ``"1d"`` (aligned on UTC), a ``timedelta``,
    or ``N`` records in time order (for records without times). ``baseline``: the first ``N``
    windows, or ``(start, end)`` times (the windows within them). ``metrics``: every metric
    the records hold by default. ``false_alarm``: the chance of an alarm on a log with no
    drop, for the whole log. ``confidence``: of each window's interval. ``labels``: people's
    labels of whole answers (``ragrecall review --answers``), to correct the means.

        from ragrecall.sinks import watch

        seen = watch("recall.jsonl", window="1d", baseline=7)
        for alarm in seen.alarms:
            print(alarm.metric, alarm.window, f"-{alarm.drop:.2f}", alarm.p_value)

    SampleError (naming the file and line) for what cannot be watched: no records, a record
    without a time when windowing by time, an unknown metric, no window after the baseline.
    """
    if isinstance(window, str):
        try:
            window = parse_window(window)
        except ValueError as err:
            raise SampleError(str(err)) from None
    records = _read(source)
    if not records:
        raise SampleError(f"{_name(source)} holds no records: nothing to watch")
    held: list[str] = []
    for _, record in records:
        held += [name for name in record.results if name not in held]
    names = list(held if metrics is None else metrics)
    unknown = [name for name in names if name not in held]
    if unknown:
        raise SampleError(f"no record holds metric {unknown[0]!r}; the log holds {held}")
    answers: list[AnswerLabel] = []
    if labels is not None:
        sources = [labels] if isinstance(labels, (str, Path)) else labels
        answers, other = read_answer_labels(list(sources))  # type: ignore[arg-type]
        check_answers(answers, [(r.id, r.content) for _, r in records], names, other)
    return watch_records(
        records, names, window=window, baseline=baseline, false_alarm=false_alarm,
        confidence=confidence, answers=answers,
    )  # fmt: skip


def _read(source: str | Path | Record | Iterable[str | Path | Record]) -> list[tuple[str, Record]]:
    items = [source] if isinstance(source, (str, Path, Record)) else list(source)
    out: list[tuple[str, Record]] = []
    for n, item in enumerate(items):
        if isinstance(item, Record):
            out.append((f"records[{n}]", item))
        elif Path(item).is_dir():
            out += [(f"{item} (record {i + 1})", r) for i, r in enumerate(read_records(item))]
        else:
            out += [(f"{item}:{line}", r) for line, r in read_log(item)]
    return out


def _name(source: object) -> str:
    return str(source) if isinstance(source, (str, Path)) else "the records"


def watch_records(
    records: Sequence[tuple[str, Record]],
    metrics: Sequence[str],
    *,
    window: timedelta | int,
    baseline: int | tuple[datetime, datetime] = 5,
    false_alarm: float = 0.05,
    confidence: float = 0.95,
    answers: Sequence[AnswerLabel] = (),
) -> Watch:
    """``records`` (each with where it was read, for messages) watched per metric of
    ``metrics``. SampleError: no records, a record without a time when windowing by time, or
    no window after the baseline."""
    if not 0 < false_alarm < 1 or not 0 < confidence < 1:
        raise SampleError(f"false_alarm and confidence must be in (0, 1): {false_alarm}")
    if not records:
        raise SampleError("the log holds no records: nothing to watch")
    groups, bounds = windows(records, window)
    if isinstance(baseline, int):
        if baseline < 1:
            raise SampleError(f"the baseline is the first N >= 1 windows, not {baseline}")
        base = list(range(min(baseline, len(groups))))
    else:
        base = [i for i, (s, e) in enumerate(bounds) if s is not None and e is not None]
        base = [i for i in base if baseline[0] <= bounds[i][0] and bounds[i][1] <= baseline[1]]  # type: ignore[operator]
    if not base:
        raise SampleError("no window lies within the baseline: widen it or shorten --window")
    watched = [i for i in range(base[-1] + 1, len(groups))]
    if not watched:
        raise SampleError(
            f"the log has {len(groups)} windows, all in the baseline: nothing after it to "
            "watch (a shorter --window, or a shorter baseline)"
        )
    pooled = [r for i in base for r in groups[i]]
    per_metric: dict[str, list[Window]] = {}
    baselines: dict[str, Estimate | None] = {}
    plans: list[tuple[str, int, int, Estimate, Estimate, Estimate | None, Estimate | None]] = []
    for metric in metrics:
        judged_base = estimate(pooled, metric, (), confidence)
        fixed_base = estimate(pooled, metric, answers, confidence) if answers else None
        baselines[metric] = fixed_base or judged_base
        per_metric[metric] = [
            _window(metric, i, groups[i], bounds[i], i in base, answers, confidence)
            for i in range(len(groups))
        ]
        if judged_base is None:
            continue
        for t in watched:
            for span in range(1, min(SPANS, t - base[-1]) + 1):
                pool = [r for i in range(t - span + 1, t + 1) for r in groups[i]]
                judged = estimate(pool, metric, (), confidence)
                if judged is None or scored(pool, metric) < MIN_SCORED:
                    continue
                fixed = estimate(pool, metric, answers, confidence) if answers else None
                plans.append((metric, t, span, judged_base, judged, fixed_base, fixed))
    level = false_alarm / max(len(plans), 1)
    alarms: dict[tuple[str, int], Alarm] = {}
    for metric, t, span, judged_base, judged, fixed_base, fixed in plans:
        a, b, basis = judged_base, judged, "judge"
        if fixed_base is not None and fixed is not None:
            a, b, basis = fixed_base, fixed, "corrected"
        statistic, p = welch(a, b)
        if p < level and (metric, t) not in alarms:
            alarms[metric, t] = Alarm(metric, t, span, a.mean - b.mean, statistic, p, level, basis)
    found = sorted(alarms.values(), key=lambda x: (x.window, list(metrics).index(x.metric)))
    return Watch(
        list(metrics), describe(window), false_alarm, confidence, per_metric, baselines, base,
        len(plans), found, len(answers),
    )  # fmt: skip


def _window(
    metric: str,
    index: int,
    records: Sequence[Record],
    bounds: tuple[datetime | None, datetime | None],
    baseline: bool,
    answers: Sequence[AnswerLabel],
    confidence: float,
) -> Window:
    judged = estimate(records, metric, (), confidence)
    fixed = estimate(records, metric, answers, confidence) if answers else None
    n = scored(records, metric)
    unscorable = sum(metric in r.results for r in records) - n
    return Window(
        metric, index, *bounds, n, unscorable, fixed or judged,
        None if judged is None else judged.mean, baseline,
    )  # fmt: skip
