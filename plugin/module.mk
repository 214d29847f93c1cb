# plugin/mpi (PMPI library, one build per MPI; smpi.mk adds the SimGrid SMPI variant) and
# plugin/spank (Slurm SPANK plugin).
-include plugin/mpi/module.mk plugin/mpi/smpi.mk plugin/spank/module.mk
