"""Independent reference implementations of the published models, for ``flocksim validate``.

Each module is written from its paper in plain NumPy and the standard library and imports
nothing from flocksim, so a mistake in flocksim's kernels, engines or parameters cannot
leak into the curves it is compared with. They are written for clarity, not speed
(all-pairs distances), and for bitwise reproducibility: only IEEE elementwise NumPy
arithmetic, sums along one axis, and the ``math`` module's scalar functions.

- :mod:`.vicsek_numpy`: Vicsek, Czirok, Ben-Jacob, Cohen, Shochet (1995).
- :mod:`.couzin_numpy`: Couzin, Krause, James, Ruxton, Franks (2002).
- :mod:`.starling_numpy`: banked starlings above a roost (Hildenbrandt, Carere & Hemelrijk 2010;
  Hemelrijk & Hildenbrandt 2011), with flocksim's documented rule forms.
"""
