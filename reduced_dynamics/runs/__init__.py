"""What every long run shares, whatever the model: checkpoint files, divergence, the kernel cache.

Paper sections: none (run machinery; docs/long_horizons.md, docs/performance_startup.md).

Modules (import them by full path; this ``__init__`` imports nothing):

* ``checkpoint``: save the complete loop state, refuse a mismatched resume (``Interrupted``);
* ``smooth_checkpoint``: the loop state and identity of a smooth-activation ``rdyn teacher`` run;
* ``sweep_rows``: per-row validity of ``rdyn sweep`` checkpoints;
* ``divergence``: one divergence rule for every iterator (``is_diverged``);
* ``kernel_cache``: the on-disk cache of generated kernel source and numba machine code
  (``cached_source``, ``load_module``, ``njit``).
* ``dask_client``: the checked connection to a Dask scheduler (``connect``, ``SchedulerError``).
"""
