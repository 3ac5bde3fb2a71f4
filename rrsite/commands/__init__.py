"""rrsite.commands: one thin module per `rrsite` command.

Each module offers ``add_arguments(parser)`` and ``run(args) -> int`` and holds no logic of its
own: it parses, calls into its package (site, collect, analyze, report, simulate, plan) and
prints. rrsite.cli imports only the command that runs, so ``rrsite plan`` never loads numpy.
"""
