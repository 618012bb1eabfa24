#ifndef HANDOVER_CLMDB_SHIM_H
#define HANDOVER_CLMDB_SHIM_H
#include <lmdb.h>
#endif
