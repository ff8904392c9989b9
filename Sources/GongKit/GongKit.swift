// GongKit
