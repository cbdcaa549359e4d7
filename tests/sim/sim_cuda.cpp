// placeholder replaced by the simulated driver
extern "C" int cuInit(unsigned) { return 0; }
