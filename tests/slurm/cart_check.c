/*
 * tests/slurm/cart_check.c: an ordinary MPI program (it knows nothing of rankmap) used by the SPANK
 * tests. It creates a Cartesian communicator with reorder=1 and checks it independently of rankmap:
 *
 *   - every process exchanges its coordinates with its MPI_Cart_shift neighbours and checks that what
 *     it receives are the coordinates a neighbour must have (and that MPI_Cart_rank agrees);
 *   - rank 0 of the grid gathers (world rank, node) for each grid rank and counts the grid edges that
 *     cross nodes, for the placement MPI gave and for the identity (grid rank r on world rank r).
 *
 * Usage: cart_check D1xD2[x...] [periodic]   (periodic: all dimensions wrap; default none)
 * Prints, from grid rank 0:  "cart: size=N moved=M neighbours_ok=0|1 offnode_identity=A offnode_cart=B"
 * and one "rank W node NAME cart C" line per process. Exit 0 unless MPI itself fails.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXD 8
#define NAME 64

static int parse_dims(const char *s, int *dims)
{
	int n = 0;
	char *end;

	while (*s && n < MAXD) {
		dims[n++] = (int)strtol(s, &end, 10);
		s = *end == 'x' ? end + 1 : end;
		if (*end != 'x')
			break;
	}
	return n;
}

/* Checks the neighbours of this process along every dimension. Returns 1 when all agree. */
static int check_neighbours(MPI_Comm cart, int nd, const int *dims, const int *periods)
{
	int me, coords[MAXD], ok = 1;

	MPI_Comm_rank(cart, &me);
	MPI_Cart_coords(cart, me, nd, coords);
	for (int d = 0; d < nd; d++) {
		int src, dst, got_from_src[MAXD], got_from_dst[MAXD];
		MPI_Cart_shift(cart, d, 1, &src, &dst);
		for (int dir = -1; dir <= 1; dir += 2) {
			int want[MAXD], r, nb = dir < 0 ? src : dst;
			memcpy(want, coords, sizeof(want));
			want[d] += dir;
			if (periods[d])
				want[d] = (want[d] + dims[d]) % dims[d];
			if (want[d] < 0 || want[d] >= dims[d]) {
				ok &= nb == MPI_PROC_NULL;
				continue;
			}
			MPI_Cart_rank(cart, want, &r);
			ok &= r == nb;
		}
		/* send my coordinates up and down, receive theirs */
		MPI_Sendrecv(coords, nd, MPI_INT, dst, 1, got_from_src, nd, MPI_INT, src, 1, cart, MPI_STATUS_IGNORE);
		MPI_Sendrecv(coords, nd, MPI_INT, src, 2, got_from_dst, nd, MPI_INT, dst, 2, cart, MPI_STATUS_IGNORE);
		for (int k = 0; k < nd; k++) {
			int e = coords[k] - (k == d), f = coords[k] + (k == d);
			if (periods[d] && k == d)
				e = (e + dims[d]) % dims[d], f = f % dims[d];
			if (src != MPI_PROC_NULL)
				ok &= got_from_src[k] == e;
			if (dst != MPI_PROC_NULL)
				ok &= got_from_dst[k] == f;
		}
	}
	return ok;
}

/* Off-node grid edges when grid rank r runs on node node_of[place[r]]. */
static int offnode(int nd, const int *dims, const int *periods, const int *place, char (*node)[NAME], int n)
{
	int count = 0;

	for (int r = 0; r < n; r++) {
		int c[MAXD], rest = r;
		for (int d = nd - 1; d >= 0; d--)
			c[d] = rest % dims[d], rest /= dims[d];
		for (int d = 0; d < nd; d++) {
			int q = 0, cc[MAXD];
			memcpy(cc, c, sizeof(cc));
			cc[d]++;
			if (cc[d] == dims[d]) {
				if (!periods[d] || dims[d] <= 2)
					continue;
				cc[d] = 0;
			}
			for (int k = 0; k < nd; k++)
				q = q * dims[k] + cc[k];
			count += strcmp(node[place[r]], node[place[q]]) != 0;
		}
	}
	return count;
}

int main(int argc, char **argv)
{
	int dims[MAXD] = { 0 }, periods[MAXD] = { 0 }, nd, wrank, wsize, crank, ok, allok, moved;
	char me[NAME] = "", (*nodes)[NAME] = NULL;
	int *world_of_cart = NULL, *ident = NULL;
	const char *sn = getenv("SLURMD_NODENAME");
	MPI_Comm cart;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
	MPI_Comm_size(MPI_COMM_WORLD, &wsize);
	nd = parse_dims(argc > 1 ? argv[1] : "4x4", dims);
	for (int d = 0; d < nd; d++)
		periods[d] = argc > 2 && !strcmp(argv[2], "periodic");
	snprintf(me, sizeof(me), "%s", sn ? sn : "?");
	MPI_Cart_create(MPI_COMM_WORLD, nd, dims, periods, 1, &cart);
	MPI_Comm_rank(cart, &crank);
	ok = check_neighbours(cart, nd, dims, periods);
	MPI_Reduce(&ok, &allok, 1, MPI_INT, MPI_LAND, 0, cart);
	moved = crank != wrank;
	MPI_Allreduce(MPI_IN_PLACE, &moved, 1, MPI_INT, MPI_SUM, cart);
	if (crank == 0) {
		nodes = calloc((size_t)wsize, NAME);
		world_of_cart = calloc((size_t)wsize, sizeof(int));
		ident = calloc((size_t)wsize, sizeof(int));
	}
	/* node names indexed by grid rank, and the world rank behind each grid rank */
	MPI_Gather(me, NAME, MPI_CHAR, nodes, NAME, MPI_CHAR, 0, cart);
	MPI_Gather(&wrank, 1, MPI_INT, world_of_cart, 1, MPI_INT, 0, cart);
	if (crank == 0) {
		char(*by_world)[NAME] = calloc((size_t)wsize, NAME);
		int *cartpos = calloc((size_t)wsize, sizeof(int));
		for (int r = 0; r < wsize; r++) {
			memcpy(by_world[world_of_cart[r]], nodes[r], NAME);
			cartpos[r] = world_of_cart[r];
			ident[r] = r;
		}
		printf("cart: size=%d moved=%d neighbours_ok=%d offnode_identity=%d offnode_cart=%d\n", wsize, moved,
		       allok, offnode(nd, dims, periods, ident, by_world, wsize),
		       offnode(nd, dims, periods, cartpos, by_world, wsize));
		for (int r = 0; r < wsize; r++)
			printf("rank %d node %s cart %d\n", world_of_cart[r], nodes[r], r);
		fflush(stdout);
		free(by_world);
		free(cartpos);
	}
	free(nodes);
	free(world_of_cart);
	free(ident);
	MPI_Comm_free(&cart);
	MPI_Finalize();
	return 0;
}
