package main

// The lock services, each one package that registers itself (its flags, how it is reached
// or spawned, its Backend, its members for the node faults, its notes and cleanup) with
// package services: one import each, and no other mention of them here. Redis, the home
// service, is imported by package session, which asks more of it.
import (
	_ "github.com/lockbench/lockbench/services/etcd"
	_ "github.com/lockbench/lockbench/services/postgres"
	_ "github.com/lockbench/lockbench/services/zookeeper"
)
