/*
 * daemon/ctl/ctl.h: subcommands of rankmapctl. Each lives in its own daemon/ctl/ctl_<name>.c and is called
 * with argv[0] == the subcommand name. Each parses its own options with getopt_long, prints its own
 * --help (man-page style: synopsis, options, examples, exit status) and returns the exit status:
 * 0 success, 1 runtime error (bad input file, unreachable daemon), 2 usage error.
 */
#ifndef RANKMAP_CTL_H
#define RANKMAP_CTL_H

int ctl_report_main(int argc, char **argv);         /* ctl_report.c */
int ctl_map_main(int argc, char **argv);            /* ctl_map.c */
int ctl_order_main(int argc, char **argv);          /* ctl_order.c */
int ctl_simulate_main(int argc, char **argv);       /* ctl_simulate.c */
int ctl_ping_main(int argc, char **argv);           /* ctl_daemon.c */
int ctl_register_main(int argc, char **argv);       /* ctl_daemon.c */
int ctl_reload_main(int argc, char **argv);         /* ctl_daemon.c */
int ctl_distance_main(int argc, char **argv);       /* ctl_daemon.c */
int ctl_slurm_topology_main(int argc, char **argv); /* ctl_slurmtopo.c */
int ctl_slurm_gres_main(int argc, char **argv);     /* ctl_slurmgres.c */
int ctl_explain_main(int argc, char **argv);        /* ctl_explain.c */
int ctl_patterns_main(int argc, char **argv);       /* ctl_patterns.c */

#endif
