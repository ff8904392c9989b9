// GongCore
