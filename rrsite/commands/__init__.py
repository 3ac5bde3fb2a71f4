"""One thin module per `rrsite` command: ``add_arguments(parser)`` and ``run(args) -> int``."""
