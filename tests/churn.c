/* A process whose threads each live about 2 ms, THREADS of them at a time,
 * one started as soon as another ends, until it is killed (R3's test).
 * Writes "ready" once the first threads run; dies with its parent. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64

static void *brief(void *arg)
{
	struct timespec ts = { 0, 2000000 };

	(void)arg;
	nanosleep(&ts, NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[MAX_THREADS];
	int n = argc > 1 ? atoi(argv[1]) : 8, i;
	pid_t parent = getppid();

	if (n < 1 || n > MAX_THREADS) {
		fprintf(stderr, "usage: churn [THREADS, 1 to %d]\n", MAX_THREADS);
		return 2;
	}
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		return 1;
	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, brief, NULL))
			return 1;
	puts("ready");
	fflush(stdout);
	for (i = 0;; i = (i + 1) % n) {
		pthread_join(t[i], NULL);
		if (pthread_create(&t[i], NULL, brief, NULL))
			return 1;
	}
}
