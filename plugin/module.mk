# plugin/mpi (PMPI library, one build per MPI) and plugin/spank (Slurm SPANK plugin).
-include plugin/mpi/module.mk plugin/spank/module.mk
