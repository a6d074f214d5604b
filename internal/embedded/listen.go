package embedded

import "net"

// listenOn returns a listen function that binds addr, whatever address kfake asks for.
func listenOn(addr string) func(network, _ string) (net.Listener, error) {
	return func(network, _ string) (net.Listener, error) {
		return net.Listen(network, addr)
	}
}
