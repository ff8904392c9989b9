#include <jack/jack.h>
