#!/bin/sh
# Prints gong's release number, read from its one place (Sources/GongKit/Support/GongVersion.swift).
set -eu
cd "$(dirname "$0")/.."
sed -n 's/^ *public static let number = "\(.*\)"$/\1/p' Sources/GongKit/Support/GongVersion.swift
