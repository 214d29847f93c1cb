/* tests/unit/test_sim_hosts.c: the allocation simulator on a switched fabric's host list
 * (order/sim_hosts.c). Eight hosts, two per leaf, four per domain (group); each policy's choice and
 * each measure worked out by hand for one job; the block policy's split over two domains in segments
 * (the fewest leaves, then the largest segment) and over three in the fullest domains (sixteen hosts, four domains); FCFS waits; a job larger than
 * the fabric refused. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "order.h"
#include "tests/harness.h"

static const uint32_t leaf[8] = { 0, 0, 1, 1, 2, 2, 3, 3 }, domain[8] = { 0, 0, 0, 0, 1, 1, 1, 1 };
/* host names that alternate groups: the name order takes one host of each group in turn */
static const uint32_t interleaved[8] = { 0, 4, 1, 5, 2, 6, 3, 7 };

static int near(double a, double b)
{
	return fabs(a - b) < 1e-9;
}

/* One job of k hosts under the policy; its measures (class "all") in v. */
static int one_job(sim_hosts_policy_t pol, uint32_t k, double v[SIM_HOSTS_NMEASURES])
{
	sim_job_t j = { 0, 100, k };
	sim_jobs_t jobs = { &j, 1, 0 };
	sim_hosts_t m = { 8, interleaved, leaf, domain, pol };
	sim_hosts_result_t r;
	int q;

	if (sim_hosts_run(&m, &jobs, &r, NULL) < 0)
		return -1;
	for (q = 0; q < SIM_HOSTS_NMEASURES; q++)
		v[q] = r.m[SIM_NCLASSES - 1][q];
	return (int)r.jobs[SIM_NCLASSES - 1];
}

int main(void)
{
	double v[SIM_HOSTS_NMEASURES];
	rm_error_t err = { 0 };
	int n, rc;

	/* first fit: hosts 0 4 1 5, domains 0 1 0 1 (4 of 12 ordered pairs inside a domain), every ring
	 * step crosses; leaves 0 2 0 2, the same */
	check(one_job(SIM_HOSTS_FIRST_FIT, 4, v) == 1, "first fit: one job measured");
	check(near(v[0], 2.0 / 3) && near(v[1], 1) && near(v[2], 2.0 / 3) && near(v[3], 1),
	      "first fit on interleaved names: domain %.4f/%.4f leaf %.4f/%.4f, expected 0.6667/1/0.6667/1", v[0], v[1],
	      v[2], v[3]);
	/* block: domain 0 has room: hosts 0 1 2 3, no global traffic; leaves 0 0 1 1: pairs 1 - 4/12,
	 * ring 1->2 and 3->0 cross */
	n = one_job(SIM_HOSTS_BLOCK, 4, v);
	check(n == 1 && near(v[0], 0) && near(v[1], 0) && near(v[2], 2.0 / 3) && near(v[3], 0.5),
	      "block: one group: domain %.4f/%.4f leaf %.4f/%.4f, expected 0/0/0.6667/0.5", v[0], v[1], v[2], v[3]);
	/* spread: no leaf holds 4, so one host of each leaf: 0 2 4 6, ranked by position 0 4 2 6 (domains
	 * 0 1 0 1: every ring step crosses); every pair crosses a leaf */
	n = one_job(SIM_HOSTS_SPREAD, 4, v);
	check(n == 1 && near(v[0], 2.0 / 3) && near(v[1], 1) && near(v[2], 1) && near(v[3], 1),
	      "spread: one host per leaf: domain %.4f/%.4f leaf %.4f/%.4f, expected 0.6667/1/1/1", v[0], v[1], v[2],
	      v[3]);
	/* spread with room on a leaf: best fit, one leaf */
	n = one_job(SIM_HOSTS_SPREAD, 2, v);
	check(n == 1 && near(v[2], 0) && near(v[0], 0), "spread: a job of 2 on one leaf");
	/* block larger than a domain: two domains (the aligned run of 2). The divisors of 6 at least a quarter
	 * of it whose split both hold: 3 (3+3: hosts 0 1 2 and 4 5 6, leaves 0 1 2 3) and 2 (4+2, the
	 * domain holding the most segments first: hosts 0 1 2 3 and 4 5, leaves 0 1 2): the fewest leaves
	 * win, 4+2, 14 of 30 ordered pairs inside a domain and 6 inside a leaf (3+3 would keep 12 and 4) */
	n = one_job(SIM_HOSTS_BLOCK, 6, v);
	check(n == 1 && near(v[0], 1 - 14.0 / 30) && near(v[2], 1 - 6.0 / 30),
	      "block: 6 hosts as 4+2 over both groups (3 leaves, not 3+3's 4): domain_pairs %.4f leaf_pairs %.4f, "
	      "expected %.4f %.4f",
	      v[0], v[2], 1 - 14.0 / 30, 1 - 6.0 / 30);

	/* block over four domains of 4 hosts, one leaf per host (every split of a job spans as many leaves
	 * as it has hosts: the leaves tie), order = host number. A first job of 2 takes domain 0's hosts 0 1
	 * (best fit, the first on a tie). A job of 6 fits no domain; of the runs of two, (0,1) holds 2+4
	 * (best fit, but 6 splits there only as 2+4: segments of 2) and (2,3) holds 4+4 (segments of 3:
	 * 3+3): on the leaves' tie the largest segment wins, 3+3 in (2,3), 12 of 30 pairs inside a domain
	 * (2+4 would keep 14). Measures are means over both jobs (the first crosses nothing). */
	{
		static const uint32_t lf[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 },
				      dm[16] = { 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3 },
				      ord[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
		sim_job_t j[2] = { { 0, 100, 2 }, { 0, 100, 6 } };
		sim_jobs_t jobs = { j, 2, 0 };
		sim_hosts_t m = { 16, ord, lf, dm, SIM_HOSTS_BLOCK };
		sim_hosts_result_t r;

		rc = sim_hosts_run(&m, &jobs, &r, NULL); /* before check(): its arguments have no order */
		check(rc == 0 && r.jobs[SIM_NCLASSES - 1] == 2 && near(r.m[SIM_NCLASSES - 1][0], (1 - 12.0 / 30) / 2),
		      "block: the run of two domains that splits 6 as 3+3 before the best fit's 2+4: domain_pairs "
		      "%.4f, expected 0.3000",
		      r.m[SIM_NCLASSES - 1][0]);
		/* a job of 12 after the first: no run of two holds it, the run of four does; the fewest
		 * domains that hold 12 are three (4+4+4 from domains 1 2 3, the most free first), not the
		 * order's 2+4+4+2: 36 of 132 pairs inside a domain */
		j[1].nodes = 12;
		rc = sim_hosts_run(&m, &jobs, &r, NULL);
		check(rc == 0 && near(r.m[SIM_NCLASSES - 1][0], (1 - 36.0 / 132) / 2),
		      "block: 12 hosts over the three fullest domains: domain_pairs %.4f, expected %.4f",
		      r.m[SIM_NCLASSES - 1][0], (1 - 36.0 / 132) / 2);
	}

	/* FCFS: two jobs of 6 hosts, the second waits until the first ends (10 s after 0, submitted at 1) */
	{
		sim_job_t j[2] = { { 0, 10, 6 }, { 1, 10, 6 } };
		sim_jobs_t jobs = { j, 2, 0 };
		sim_hosts_t m = { 8, interleaved, leaf, domain, SIM_HOSTS_BLOCK };
		sim_hosts_result_t r;

		rc = sim_hosts_run(&m, &jobs, &r, NULL);
		check(rc == 0 && near(r.mean_wait, 4.5), "FCFS wait %.2f, expected 4.5", r.mean_wait);
		j[1].nodes = 9;
		rc = sim_hosts_run(&m, &jobs, &r, &err);
		check(rc < 0 && strstr(err.text, "9 hosts"), "a job of 9 hosts on 8 is refused: '%s'", err.text);
	}
	return harness_done();
}
