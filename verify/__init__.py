"""Claims, runner, reports and the ``tdcheck`` command line."""
