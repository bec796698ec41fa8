"""PIAS demotion thresholds from the PIAS-NS2 scripts."""

from __future__ import annotations

from flowsched.workloads._common import PACKET_PAYLOAD_BYTES

PIAS_THRESHOLDS_PACKETS: dict[str, dict[float, tuple[int, ...]]] = {
    # HKUST-SING/PIAS-NS2 scripts/run_pias_dctcp.py @5fb5867c (web-search values
    # last changed in d9eecc95); same values in pschuprikov/ascc scripts/config.toml.
    # flowsched/data/README.md, "PIAS demotion thresholds". Units: 1460-byte packets.
    "websearch": {
        0.9: (759, 1132, 1456, 1737, 2010, 2199, 2325),
        0.8: (909, 1329, 1648, 1960, 2143, 2337, 2484),
        0.7: (999, 1305, 1564, 1763, 1956, 2149, 2309),
        0.6: (956, 1381, 1718, 2028, 2297, 2551, 2660),
        0.5: (1059, 1412, 1643, 1869, 2008, 2115, 2184),
    },
    # scripts/run_pias_vl2.py @5fb5867c
    "datamining": {
        0.9: (750, 1083, 1416, 13705, 14952, 21125, 28253),
        0.8: (745, 1083, 1391, 13689, 14936, 21149, 27245),
        0.7: (907, 1301, 1619, 12166, 12915, 21313, 26374),
        0.6: (840, 1232, 1617, 11950, 12238, 21494, 25720),
        0.5: (805, 1106, 1401, 10693, 11970, 21162, 22272),
    },
}
"""PIAS demotion thresholds in packets (8 queues, 7 thresholds) per workload and load."""

_PIAS_ALIASES = {
    "websearch": "websearch",
    "web_search": "websearch",
    "web-search": "websearch",
    "dctcp": "websearch",
    "ws": "websearch",
    "datamining": "datamining",
    "data_mining": "datamining",
    "data-mining": "datamining",
    "vl2": "datamining",
    "dm": "datamining",
}


def pias_thresholds(workload: str, load: float, *, nearest: bool = False) -> list[float]:
    """PIAS demotion thresholds in bytes (packets * 1460) from the PIAS-NS2 scripts.

    A flow gets priority i while bytes_sent <= thresh_i (8 queues, so 7
    thresholds, increasing). Values: ``flowsched/data/README.md``, "PIAS
    demotion thresholds" (HKUST-SING/PIAS-NS2 ``run_pias_dctcp.py`` /
    ``run_pias_vl2.py``; the same in aSCC's ``config.toml``).

    Parameters
    ----------
    workload : str
        ``"websearch"`` or ``"datamining"`` (aliases: ``web_search``,
        ``dctcp``, ``ws``, ``data_mining``, ``vl2``, ``dm``). Other
        workloads have no published thresholds: ValueError.
    load : float
        One of 0.5, 0.6, 0.7, 0.8, 0.9. Any other load is an error unless
        ``nearest=True``.
    nearest : bool
        Use the nearest tabulated load instead (ties go to the higher load);
        loads outside [0.45, 0.95] are still an error.

    Returns
    -------
    list of float
        7 thresholds in bytes, increasing.
    """
    key = _PIAS_ALIASES.get(str(workload).lower())
    if key is None:
        raise ValueError(
            f"pias_thresholds: no PIAS thresholds for workload {workload!r}; "
            f"available: {sorted(PIAS_THRESHOLDS_PACKETS)} (aliases {sorted(_PIAS_ALIASES)})"
        )
    table = PIAS_THRESHOLDS_PACKETS[key]
    loads = sorted(table)
    match = [x for x in loads if abs(x - float(load)) < 1e-9]
    if match:
        chosen = match[0]
    elif nearest and 0.45 <= float(load) <= 0.95:
        # distances rounded to 1e-9, so that a load halfway between two columns (0.85) is a
        # tie whatever the floats' rounding, and goes to the higher load as documented
        chosen = min(loads, key=lambda x: (round(abs(x - float(load)), 9), -x))
    else:
        hint = "" if nearest else "; pass nearest=True to use the nearest tabulated load"
        raise ValueError(f"pias_thresholds: no thresholds for load {load!r}; tabulated loads: {loads}{hint}")
    return [float(p * PACKET_PAYLOAD_BYTES) for p in table[chosen]]

