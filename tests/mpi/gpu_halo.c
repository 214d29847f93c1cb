/*
 * tests/mpi/gpu_halo.c: a Cartesian halo exchange of one rank per GPU, checking that reordering only
 * renumbers: every process drives the same GPU before and after MPI_Cart_create (its device variables
 * unchanged), and the reordered communicator is consistent.
 *
 * Usage: gpu_halo NDIMS D1 .. Dn P1 .. Pn
 * Each rank reads its device variables (CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES,
 * ZE_AFFINITY_MASK, GPU_DEVICE_ORDINAL) before and after the call and exchanges its world rank with its
 * Cartesian neighbours (the halo must carry the world rank that holds the neighbour's Cartesian rank).
 * Rank 0 prints one line per process, in world rank order:
 *   gpu_halo world=W cart=C dev=VALUES same=1|0
 * (VALUES: NAME=value pairs joined by ',', "none" when no variable is set) and exits non-zero when a
 * check failed anywhere.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXD 8
#define DEVLEN 200

static const char *const vars[] = { "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
				    "ZE_AFFINITY_MASK", "GPU_DEVICE_ORDINAL" };

static void devices(char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]);

		if (v && off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s%s=%s", off ? "," : "", vars[i], v);
	}
	if (!buf[0])
		snprintf(buf, len, "none");
}

typedef struct rec {
	int world, cart, same;
	char dev[DEVLEN];
} rec_t;

int main(int argc, char **argv)
{
	int nd = 0, dims[MAXD], per[MAXD], world, size, errors = 0;
	char before[DEVLEN], after[DEVLEN];
	MPI_Comm cart;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &world);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	devices(before, sizeof(before));
	if (argc < 2 || (nd = atoi(argv[1])) < 1 || nd > MAXD || argc != 2 + 2 * nd) {
		if (world == 0)
			fprintf(stderr, "usage: gpu_halo NDIMS D1 .. Dn P1 .. Pn\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	for (int d = 0; d < nd; d++)
		dims[d] = atoi(argv[2 + d]), per[d] = atoi(argv[2 + nd + d]);
	MPI_Cart_create(MPI_COMM_WORLD, nd, dims, per, 1, &cart);

	rec_t me = { .world = world, .cart = -1 };

	devices(after, sizeof(after));
	me.same = strcmp(before, after) == 0;
	snprintf(me.dev, sizeof(me.dev), "%s", after);
	errors += !me.same;
	if (cart != MPI_COMM_NULL) {
		int coords[MAXD], back;

		MPI_Comm_rank(cart, &me.cart);
		MPI_Cart_coords(cart, me.cart, nd, coords);
		MPI_Cart_rank(cart, coords, &back);
		errors += back != me.cart;
		for (int d = 0; d < nd; d++) { /* the halo carries the sender's world rank and Cartesian rank */
			int src, dst, out[2] = { world, me.cart }, in[2] = { -1, -1 };

			MPI_Cart_shift(cart, d, 1, &src, &dst);
			MPI_Sendrecv(out, 2, MPI_INT, dst, d, in, 2, MPI_INT, src, d, cart, MPI_STATUS_IGNORE);
			if (src != MPI_PROC_NULL) {
				MPI_Group wg, cg;
				int wr = -1;

				MPI_Comm_group(cart, &cg);
				MPI_Comm_group(MPI_COMM_WORLD, &wg);
				MPI_Group_translate_ranks(cg, 1, &src, wg, &wr);
				MPI_Group_free(&cg);
				MPI_Group_free(&wg);
				errors += in[1] != src || in[0] != wr;
			}
		}
	}
	rec_t *all = world == 0 ? malloc(sizeof(rec_t) * (size_t)size) : NULL;
	int total = 0;

	MPI_Gather(&me, (int)sizeof(me), MPI_BYTE, all, (int)sizeof(me), MPI_BYTE, 0, MPI_COMM_WORLD);
	MPI_Reduce(&errors, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (world == 0) {
		for (int r = 0; r < size; r++)
			printf("gpu_halo world=%d cart=%d dev=%s same=%d\n", all[r].world, all[r].cart, all[r].dev,
			       all[r].same);
		printf("gpu_halo errors=%d\n", total);
		fflush(stdout);
		free(all);
	}
	if (cart != MPI_COMM_NULL)
		MPI_Comm_free(&cart);
	MPI_Finalize();
	return total ? 1 : 0;
}
